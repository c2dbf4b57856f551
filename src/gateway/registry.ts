import type { InboundProblemType } from './inbound'
import type { ConnectorCapabilities, ConnectorModule, ConnectorRegistry } from './connector'
import { adyenModule } from './adyen'
import { simulatedModule } from './simulated'
import { stripeModule } from './stripe'

/** The PSPs this service speaks to out of the box, in the order the API lists them. Another PSP is one more module here. */
export const BUILT_IN_CONNECTORS: readonly ConnectorModule[] = [simulatedModule, stripeModule, adyenModule]

/** A connector type: lower case letters, digits and `_`, starting with a letter (it names the type in URLs and logs). */
export const CONNECTOR_TYPE_PATTERN = /^[a-z][a-z0-9_]{0,31}$/

/** A webhook's path segment (POST /connectors/{connectorId}/<path>): lower case letters, digits and `-`. */
export const WEBHOOK_PATH_PATTERN = /^[a-z][a-z0-9-]{0,63}$/

const NO_CAPABILITIES: ConnectorCapabilities = { customerPresent: false, paymentMethodObject: false, needsPaymentMethod: false }

export type { ConnectorRegistry } from './connector'

export function connectorRegistry (modules: readonly ConnectorModule[] = BUILT_IN_CONNECTORS): ConnectorRegistry {
  const byType = new Map<string, ConnectorModule>()
  for (const module of modules) {
    if (!CONNECTOR_TYPE_PATTERN.test(module.type)) throw new Error(`connector type ${JSON.stringify(module.type)} must match ${String(CONNECTOR_TYPE_PATTERN)}`)
    if (byType.has(module.type)) throw new Error(`two connector modules have the type ${module.type}`)
    byType.set(module.type, module)
  }
  const paths = new Set<string>()
  const problemTypes = new Map<string, InboundProblemType>()
  for (const { type, inbound } of modules) {
    if (inbound === undefined) continue
    const { path, problemTypes: own = [] } = inbound.webhook
    if (!WEBHOOK_PATH_PATTERN.test(path)) throw new Error(`webhook path ${JSON.stringify(path)} must match ${String(WEBHOOK_PATH_PATTERN)}`)
    if (paths.has(path)) throw new Error(`two connector modules have the webhook path ${path}`)
    paths.add(path)
    for (const problemType of own) {
      // A module's codes are its own by name (ADYEN_…), so they never answer another module's or the service's errors.
      if (!problemType.code.startsWith(`${type.toUpperCase()}_`)) throw new Error(`problem code ${problemType.code} of the ${type} module must start with ${type.toUpperCase()}_`)
      const clash = [...problemTypes.values()].find((other) => other.code === problemType.code || other.type === problemType.type || other.component === problemType.component)
      if (clash !== undefined) throw new Error(`two connector modules have the problem type ${problemType.code} (${problemType.type}, ${problemType.component})`)
      problemTypes.set(problemType.code, problemType)
    }
  }
  return {
    modules: [...modules],
    types: [...byType.keys()],
    moduleOf: (type) => byType.get(type),
    capabilitiesOf: (type) => byType.get(type)?.capabilities ?? NO_CAPABILITIES,
    typesWith: (capability) => modules.filter((module) => module.capabilities[capability]).map((module) => module.type),
    credentialErrors: (type, credentials) => byType.get(type)?.credentialErrors(credentials) ?? {},
    problemTypes
  }
}
