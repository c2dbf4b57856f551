import t from 'tap'
import { COUNTRY_CODES, isCountryCode } from '../../src/domain/countries'

t.test('all 249 officially assigned codes, unique and upper case', async (t) => {
  t.equal(COUNTRY_CODES.length, 249)
  t.equal(new Set(COUNTRY_CODES).size, 249)
  t.ok(Object.isFrozen(COUNTRY_CODES))
  for (const code of COUNTRY_CODES) t.match(code, /^[A-Z]{2}$/)
})

t.test('known codes are accepted', async (t) => {
  for (const code of ['US', 'DE', 'FR', 'GB', 'JP', 'AX', 'SS', 'SX', 'CW', 'BQ', 'PS', 'TW', 'AQ', 'UM']) {
    t.ok(isCountryCode(code), code)
  }
})

t.test('lower case, reserved, historic and user-assigned codes are rejected', async (t) => {
  for (const code of ['us', 'De', 'UK', 'EU', 'AN', 'CS', 'YU', 'SU', 'DD', 'ZR', 'TP', 'XK', 'ZZ', 'AA', 'QZ', 'USA', '', 'toString']) {
    t.notOk(isCountryCode(code), JSON.stringify(code))
  }
})
