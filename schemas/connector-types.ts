import { Type } from '@sinclair/typebox'
import type { ConnectorType as ConnectorTypeName, ConnectorTypeDescription, CredentialMember } from '../src/domain/connectors'

/*
 * The connector types and their credentials are the instance's connector modules (src/gateway/registry.ts), so
 * these two components are built per instance from them (plugins/schemas.ts); every other schema refers to them.
 */

/** A connector type of this instance (the `ConnectorType` component). */
export const ConnectorType = Type.Unsafe<ConnectorTypeName>({ $ref: 'ConnectorType' })

/** A connector account's credentials, write-only (the `ConnectorCredentials` component). */
export const ConnectorCredentials = Type.Unsafe<Record<string, string>>({ $ref: 'ConnectorCredentials' })

export function connectorTypeComponent (types: readonly string[]) {
  return Type.Unsafe<ConnectorTypeName>({
    $id: 'ConnectorType',
    title: 'Connector type',
    type: 'string',
    enum: [...types],
    description: 'The PSP: one of the connector types this service has (`simulated` is the built-in test gateway).',
    examples: [types.includes('stripe') ? 'stripe' : types[0]]
  })
}

/** Two connector types may share a member's name: its bounds then hold both, and its description says both. */
function merged (first: CredentialMember, second: CredentialMember): CredentialMember {
  return {
    description: first.description === second.description ? first.description : `${first.description} ${second.description}`,
    minLength: Math.min(first.minLength, second.minLength),
    maxLength: Math.max(first.maxLength, second.maxLength),
    example: first.example
  }
}

export function connectorCredentialsComponent (descriptions: readonly ConnectorTypeDescription[]) {
  const members = new Map<string, CredentialMember>()
  for (const { credentialMembers } of descriptions) {
    for (const [name, member] of Object.entries(credentialMembers)) {
      const known = members.get(name)
      members.set(name, known === undefined ? member : merged(known, member))
    }
  }
  const withoutCredentials = descriptions.filter((description) => Object.keys(description.credentialMembers).length === 0).map((description) => `\`${description.type}\``)
  return Type.Object(Object.fromEntries([...members].map(([name, member]) => [name, Type.Optional(Type.String({
    minLength: member.minLength, maxLength: member.maxLength, description: member.description, examples: [member.example]
  }))])), {
    $id: 'ConnectorCredentials',
    title: 'Connector credentials',
    additionalProperties: false,
    description: 'Write-only: checked with one read-only, authenticated call to the PSP ' +
      'before anything is stored, then stored encrypted; never returned, logged or put in events.' +
      (withoutCredentials.length === 0 ? '' : ` ${withoutCredentials.join(', ')} take${withoutCredentials.length === 1 ? 's' : ''} none (leave it out or send \`{}\`).`)
  })
}
