// Fails the test run when line coverage drops below the threshold (tap 21 has no threshold option).
import { readFileSync } from 'node:fs'

const threshold = Number(process.argv[2] ?? 90)
const summary = JSON.parse(readFileSync('.tap/report/coverage-summary.json', 'utf8'))
const lines = summary.total.lines.pct
if (!(lines >= threshold)) {
  console.error(`coverage: ${lines}% of lines covered, below the required ${threshold}%`)
  process.exit(1)
}
console.log(`coverage: ${lines}% of lines covered (required: ${threshold}%)`)
