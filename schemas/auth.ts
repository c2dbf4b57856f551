import { Type } from '@sinclair/typebox'
import { AUTH_REALM } from '../src/domain/errors'
import { ErrorEnvelope, ProblemDetails } from './common'

/** The name of the OpenAPI security scheme (components.securitySchemes). */
export const BEARER_SCHEME = 'bearer'

export const bearerSecurityScheme = {
  type: 'http' as const,
  scheme: 'bearer',
  bearerFormat: 'API key (sk_…)',
  description: 'An API key sent as `Authorization: Bearer <key>`: the admin key (ADMIN_API_KEY) for administration, ' +
    'a merchant API key (`sk_…`, from `POST /merchants/{id}/api-keys`) for payments and the merchant\'s own records.'
}

/** The dashboard's session cookie and the CSRF header that must accompany it (issue 30). */
export const DASHBOARD_SESSION_SCHEME = 'dashboardSession'
export const CSRF_SCHEME = 'csrfToken'

const apiKeyScheme = (location: 'cookie' | 'header', name: string, description: string) => ({ type: 'apiKey' as const, in: location, name, description })

export const dashboardSessionSecurityScheme = apiKeyScheme('cookie', 'dashboard_session',
  'The dashboard\'s session (`POST /dashboard/session`): an HttpOnly, SameSite=Strict cookie. On the API it counts only ' +
    'together with the session\'s `X-CSRF-Token` header; a bearer key, when sent, wins.')

export const csrfSecurityScheme = apiKeyScheme('header', 'X-CSRF-Token',
  'The CSRF token of the dashboard session (returned by `POST` and `GET /dashboard/session`); without it the cookie is ignored.')

/** Operation-level `security`: the bearer key, or the dashboard session with its CSRF header, or none (public). */
export const requiresKey: Array<Record<string, string[]>> = [{ [BEARER_SCHEME]: [] }, { [DASHBOARD_SESSION_SCHEME]: [], [CSRF_SCHEME]: [] }]
export const publicOperation: Array<Record<string, string[]>> = []

const wwwAuthenticate = {
  'www-authenticate': {
    type: 'string',
    description: `\`Bearer realm="${AUTH_REALM}"\`; with \`error="invalid_token"\` when a key was sent but is malformed, unknown, revoked or expired (RFC 6750).`
  }
}

const unauthorizedText = 'No API key, or one that is malformed, unknown, revoked or expired. `WWW-Authenticate` says which (RFC 6750).'

function forbiddenText (who: string): string {
  return `The key is valid but may not do this: ${who}.`
}

/** 401 and 403 in the products envelope. */
export function envelopeAuthErrors (who: string) {
  return {
    401: {
      description: unauthorizedText,
      headers: wwwAuthenticate,
      content: {
        'application/json': {
          schema: Type.Ref(ErrorEnvelope),
          example: { error: 'This operation needs an API key: send `Authorization: Bearer <key>`.', code: 'UNAUTHENTICATED' }
        }
      }
    },
    403: {
      description: forbiddenText(who),
      content: {
        'application/json': {
          schema: Type.Ref(ErrorEnvelope),
          example: { error: 'This operation needs the admin key; a merchant API key may not call it.', code: 'FORBIDDEN' }
        }
      }
    }
  }
}

/** 401 and 403 as RFC 9457 problem documents (payments, merchants), with examples at `instance`. */
export function problemAuthErrors (who: string, instance: string, forbiddenDetail: string) {
  const problem = (status: number, title: string, detail: string) => ({
    type: status === 401 ? 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.2' : 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.4',
    title,
    status,
    detail,
    instance,
    traceId: '0f8fad5b-d9cb-469f-a165-70867728950e'
  })
  return {
    401: {
      description: unauthorizedText,
      headers: wwwAuthenticate,
      content: {
        'application/problem+json': {
          schema: Type.Ref(ProblemDetails),
          example: problem(401, 'Unauthorized', 'This operation needs an API key: send `Authorization: Bearer <key>`.')
        }
      }
    },
    403: {
      description: forbiddenText(who),
      content: {
        'application/problem+json': {
          schema: Type.Ref(ProblemDetails),
          example: problem(403, 'Forbidden', forbiddenDetail)
        }
      }
    }
  }
}
