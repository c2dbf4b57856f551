import t from 'tap'
import { CURRENCY_MINOR_UNITS, isActiveCurrency, minorUnitsOf } from '../../src/domain/currencies'

t.test('known active codes have their ISO 4217 minor units', async (t) => {
  const expected: Record<string, number> = {
    USD: 2,
    EUR: 2,
    GBP: 2,
    JPY: 0,
    KRW: 0,
    ISK: 0,
    VND: 0,
    XOF: 0,
    XAF: 0,
    XPF: 0,
    BHD: 3,
    KWD: 3,
    JOD: 3,
    OMR: 3,
    TND: 3,
    LYD: 3,
    IQD: 3,
    CLF: 4,
    UYW: 4,
    UYI: 0,
    USN: 2,
    XCG: 2,
    ZWG: 2,
    SLE: 2,
    VES: 2,
    VED: 2
  }
  for (const [code, units] of Object.entries(expected)) {
    t.ok(isActiveCurrency(code), `${code} is active`)
    t.equal(minorUnitsOf(code), units, `${code} has ${units} minor units`)
  }
})

t.test('historic, lower-case, non-monetary and junk codes are rejected', async (t) => {
  for (const code of ['DEM', 'FRF', 'ITL', 'ESP', 'HRK', 'VEF', 'MRO', 'STD', 'ZMK', 'BYR', 'LTL', 'ANG', 'ZWL', 'SLL',
    'usd', 'Usd', 'eur', 'XAU', 'XTS', 'XXX', 'XDR', '', 'US', 'USDD', 'toString', '__proto__', 'constructor']) {
    t.notOk(isActiveCurrency(code), `${JSON.stringify(code)} is not active`)
    t.equal(minorUnitsOf(code), undefined)
  }
})

t.test('the table is frozen, upper-case three-letter codes with 0–4 minor units', async (t) => {
  t.ok(Object.isFrozen(CURRENCY_MINOR_UNITS))
  const codes = Object.keys(CURRENCY_MINOR_UNITS)
  t.ok(codes.length >= 160 && codes.length <= 190, `about 170 codes (${codes.length})`)
  for (const code of codes) {
    t.match(code, /^[A-Z]{3}$/)
    t.ok([0, 2, 3, 4].includes(CURRENCY_MINOR_UNITS[code]!), `${code} minor units`)
  }
})
