// Prints the line coverage of the last tap run and fails below the threshold. tap enforces the same
// floor itself (.taprc: lines, statements, functions, branches); this is the explicit, readable last word.
import { readFileSync } from 'node:fs'

const threshold = Number(process.argv[2] ?? 90)
const summary = JSON.parse(readFileSync('.tap/report/coverage-summary.json', 'utf8'))
const lines = summary.total.lines.pct
if (!(lines >= threshold)) {
  console.error(`coverage: ${lines}% of lines covered, below the required ${threshold}%`)
  process.exit(1)
}
console.log(`coverage: ${lines}% of lines covered (required: ${threshold}%)`)
