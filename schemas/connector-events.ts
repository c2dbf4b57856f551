import { Type } from '@sinclair/typebox'
import { MAX_PARAM_LENGTH } from './patterns'

/** Where connector accounts' PSP webhooks arrive: POST /connectors/{connectorId}/<the module's webhook path>. */
export const CONNECTORS_PATH = '/connectors'

export const exampleConnectorId = '019ab0c2-5d1e-7f20-8a31-b4c5d6e7f809'

export const ConnectorEventParams = Type.Object({
  connectorId: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The connector account id (from `POST /merchants/{id}/connectors`).', examples: [exampleConnectorId] })
})
