/** A seeded pseudo-random generator (mulberry32): the same seed gives the same sequence on every machine. */
export class Rng {
  private state: number

  constructor (seed: number) {
    this.state = seed >>> 0
  }

  /** A float in [0, 1). */
  next (): number {
    this.state = (this.state + 0x6D2B79F5) >>> 0
    let value = this.state
    value = Math.imul(value ^ (value >>> 15), value | 1)
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61)
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296
  }

  /** An integer in [0, n). */
  int (n: number): number {
    return Math.floor(this.next() * n)
  }

  chance (probability: number): boolean {
    return this.next() < probability
  }

  pick<T> (items: readonly T[]): T {
    const item = items[this.int(items.length)]
    if (item === undefined) throw new Error('pick from an empty list')
    return item
  }

  /** One of `weights`' keys, chosen in proportion to its weight. */
  weighted<K extends string> (weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as Array<[K, number]>
    let roll = this.next() * entries.reduce((sum, [, weight]) => sum + weight, 0)
    for (const [key, weight] of entries) {
      roll -= weight
      if (roll < 0) return key
    }
    return entries[entries.length - 1]![0]
  }
}
