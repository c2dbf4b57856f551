import t from 'tap'
import { BUILT_IN_CONNECTORS, connectorRegistry } from '../../src/gateway/registry'
import { simulatedModule } from '../../src/gateway/simulated'
import { stripeModule } from '../../src/gateway/stripe'
import { adyenModule } from '../../src/gateway/adyen'

t.test('the built-in registry: the three PSPs in the API\'s order, each with what it can do', async (t) => {
  const registry = connectorRegistry()
  t.same(registry.types, ['simulated', 'stripe', 'adyen'])
  t.equal(registry.moduleOf('stripe'), stripeModule)
  t.equal(registry.moduleOf('paypal'), undefined)
  t.same(registry.typesWith('customerPresent'), ['simulated', 'stripe', 'adyen'])
  t.same(registry.typesWith('paymentMethodObject'), ['adyen'])
  t.same(registry.typesWith('needsPaymentMethod'), ['stripe', 'adyen'])
  t.same(registry.capabilitiesOf('paypal'), { customerPresent: false, paymentMethodObject: false, needsPaymentMethod: false }, 'a type it lacks can do nothing')
})

t.test('credentials are checked by the type\'s module; a type the registry lacks is left to the type\'s own check', async (t) => {
  const registry = connectorRegistry()
  t.same(registry.credentialErrors('stripe', { secretKey: 'sk_test_51Hx00secretPART00004242' }), {})
  t.same(Object.keys(registry.credentialErrors('stripe', { secretKey: 'nope', extra: 'x' })).sort(), ['credentials.extra', 'credentials.secretKey'])
  t.match(registry.credentialErrors('adyen', undefined), { credentials: [/^An adyen connector needs credentials/] })
  t.same(registry.credentialErrors('simulated', {}), {})
  t.same(Object.keys(registry.credentialErrors('simulated', { key: 'x' })), ['credentials'])
  t.same(registry.credentialErrors('paypal', { anything: 1 }), {})
})

t.test('hints show the last four characters of the key each PSP names, nothing for the simulated one', async (t) => {
  t.equal(stripeModule.credentialsHint({ secretKey: 'sk_test_abcd1234' }), '…1234')
  t.equal(adyenModule.credentialsHint({ apiKey: 'AQE_key_wxyz', merchantAccount: 'M' }), '…wxyz')
  t.equal(adyenModule.credentialsHint(undefined), null)
  t.equal(simulatedModule.credentialsHint({}), null)
})

t.test('a registry refuses two modules of one type and a type that cannot name a connector', async (t) => {
  t.throws(() => connectorRegistry([...BUILT_IN_CONNECTORS, { ...stripeModule }]), /two connector modules have the type stripe/)
  t.throws(() => connectorRegistry([{ ...stripeModule, type: 'Stripe EU' }]), /connector type "Stripe EU" must match/)
  t.same(connectorRegistry([adyenModule]).types, ['adyen'], 'an instance may have fewer PSPs')
})

t.test('a registry refuses a webhook path that cannot be a URL segment or that two modules share, and collects their problem types', async (t) => {
  const stripeInbound = stripeModule.inbound
  if (stripeInbound === undefined) throw new Error('the stripe module receives events')
  const withPath = (type: string, path: string) => ({ ...stripeModule, type, inbound: { ...stripeInbound, webhook: { ...stripeInbound.webhook, path } } })
  t.throws(() => connectorRegistry([withPath('stripe_eu', 'Stripe/Events')]), /webhook path "Stripe\/Events" must match/)
  t.throws(() => connectorRegistry([stripeModule, withPath('stripe_eu', 'stripe-events')]), /two connector modules have the webhook path stripe-events/)
  const adyenInbound = adyenModule.inbound
  if (adyenInbound === undefined) throw new Error('the adyen module receives events')
  const [adyenProblem] = adyenInbound.webhook.problemTypes ?? []
  if (adyenProblem === undefined) throw new Error('the adyen webhook has a problem type')
  const withProblem = (type: string, path: string, problem: typeof adyenProblem) =>
    ({ ...adyenModule, type, inbound: { ...adyenInbound, webhook: { ...adyenInbound.webhook, path, problemTypes: [problem] } } })
  t.throws(() => connectorRegistry([withProblem('acme', 'acme-events', adyenProblem)]), /problem code ADYEN_NOTIFICATION_UNVERIFIED of the acme module must start with ACME_/,
    'a module\'s codes are named after it')
  t.throws(() => connectorRegistry([adyenModule, withProblem('adyen_eu', 'adyen-eu-notifications', { ...adyenProblem, code: 'ADYEN_EU_UNVERIFIED' })]),
    /two connector modules have the problem type ADYEN_EU_UNVERIFIED/, 'nor may two modules share a type or a component')
  const registry = connectorRegistry()
  t.same([...registry.problemTypes.keys()], ['ADYEN_NOTIFICATION_UNVERIFIED'], 'the problem types the webhooks add, by code')
  t.equal(registry.problemTypes.get('ADYEN_NOTIFICATION_UNVERIFIED')?.type, 'urn:problem-type:adyen-notification-unverified')
})
