import t, { type Test } from 'tap'
import { buildTestApp, merchantWithKey } from '../../helpers/app'
import { FAKE_ADYEN_API_KEY, FAKE_ADYEN_MERCHANT, FakeAdyen } from '../../helpers/fake-adyen'

const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056'
const credentials = { apiKey: FAKE_ADYEN_API_KEY, merchantAccount: FAKE_ADYEN_MERCHANT, hmacKey: HMAC_KEY }

async function setup (t: Test) {
  const fake = await FakeAdyen.start()
  t.teardown(async () => { await fake.close() })
  const app = await buildTestApp(t, { ADYEN_CHECKOUT_URL: fake.url })
  const merchant = await merchantWithKey(app)
  return { app, fake, url: `/merchants/${merchant.merchantId}/connectors`, headers: merchant.auth }
}

t.test('an Adyen account: checked with POST /paymentMethods on ADYEN_CHECKOUT_URL, then stored; the hint is the API key\'s last 4', async (t) => {
  const { app, fake, url, headers } = await setup(t)
  const res = await app.inject({ method: 'POST', url, headers, payload: { type: 'adyen', credentials, priority: 1 } })
  t.equal(res.statusCode, 201)
  t.match(res.json(), { type: 'adyen', priority: 1, status: 'enabled', credentialsHint: `…${FAKE_ADYEN_API_KEY.slice(-4)}` })
  t.notOk(res.body.includes(FAKE_ADYEN_API_KEY) || res.body.includes(HMAC_KEY), 'never the credentials')
  t.match(fake.requests, [{ method: 'POST', path: '/v72/paymentMethods', headers: { 'x-api-key': FAKE_ADYEN_API_KEY }, body: { merchantAccount: FAKE_ADYEN_MERCHANT } }])

  const live = await app.inject({ method: 'POST', url, headers, payload: { type: 'adyen', credentials: { ...credentials, liveUrlPrefix: '1797a841fbb37ca7-AdyenDemo' } } })
  t.equal(live.statusCode, 201, 'a live prefix is accepted (ADYEN_CHECKOUT_URL still wins)')
})

t.test('refused by Adyen: 400 connector-credentials-refused (wrong key, or a merchant account the key may not use); unreachable: 503', async (t) => {
  const { app, fake, url, headers } = await setup(t)
  const wrongKey = await app.inject({ method: 'POST', url, headers, payload: { type: 'adyen', credentials: { ...credentials, apiKey: 'AQEwrongEXAMPLEkey0000' } } })
  t.equal(wrongKey.statusCode, 400)
  t.match(wrongKey.json(), { type: 'urn:problem-type:connector-credentials-refused' })
  const otherAccount = await app.inject({ method: 'POST', url, headers, payload: { type: 'adyen', credentials: { ...credentials, merchantAccount: 'SomeoneElseECOM' } } })
  t.equal(otherAccount.statusCode, 400)
  await fake.stopListening()
  const unreachable = await app.inject({ method: 'POST', url, headers, payload: { type: 'adyen', credentials } })
  t.equal(unreachable.statusCode, 503)
  t.same((await app.inject({ method: 'GET', url, headers })).json().data, [], 'nothing stored')
})

t.test('Adyen credentials are checked for form before any call: field errors, never quoting them', async (t) => {
  const { app, fake, url, headers } = await setup(t)
  const missing = await app.inject({ method: 'POST', url, headers, payload: { type: 'adyen' } })
  t.equal(missing.statusCode, 400)
  t.ok(missing.json().errors.credentials)
  const malformed = await app.inject({
    method: 'POST',
    url,
    headers,
    payload: { type: 'adyen', credentials: { apiKey: 'short key', merchantAccount: 'has space', hmacKey: 'xyz', liveUrlPrefix: '-bad-', secretKey: 'sk_test_12345678' } }
  })
  t.equal(malformed.statusCode, 400)
  t.same(Object.keys(malformed.json().errors).sort(),
    ['credentials.apiKey', 'credentials.hmacKey', 'credentials.liveUrlPrefix', 'credentials.merchantAccount', 'credentials.secretKey'])
  t.notOk(malformed.body.includes('has space') || malformed.body.includes('short key'), 'never quoted')
  const { hmacKey: _hmacKey, ...withoutHmac } = credentials
  const noHmac = await app.inject({ method: 'POST', url, headers, payload: { type: 'adyen', credentials: withoutHmac } })
  t.same(Object.keys(noHmac.json().errors), ['credentials.hmacKey'], 'the hmacKey is required (notifications are verified with it)')
  t.equal(fake.requests.length, 0, 'Adyen was never asked')
})
