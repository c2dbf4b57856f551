import { Type } from '@sinclair/typebox'
import { API_VERSIONS, LATEST_API_VERSION, type ApiVersion } from '../src/domain/api-versions'

const versions = API_VERSIONS.join(', ')

/** A pinned API version in a resource (merchant, webhook endpoint). */
export const apiVersionField = (description: string) => Type.Unsafe<ApiVersion>({
  type: 'string',
  enum: [...API_VERSIONS],
  description: `${description} Supported: ${versions}.`,
  examples: [LATEST_API_VERSION]
})

/**
 * A version a request body asks for: any string of a sane length, checked by the service, so that
 * an unknown one is answered with the supported versions (not a bare enum failure).
 */
export const apiVersionInput = (description: string) => Type.String({
  minLength: 1,
  maxLength: 64,
  description: `${description} One of ${versions}; another value is 400 listing them.`,
  examples: [LATEST_API_VERSION]
})
