import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { ForbiddenError } from '../../src/domain/errors'
import { normalizeRange, validPageRequest } from '../../src/domain/pagination'
import { integerQuery } from '../../plugins/http/request-guards'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { jsonResponse, problemResponse } from '../../schemas/common'
import { paymentErrors } from '../../schemas/payments'
import { Event, EventList, EventListQuery, EventParams, eventsDescription, toEventResource } from '../../schemas/events'

const adminRefused = 'The admin key is refused: events belong to merchants.'
const authErrors = problemAuthErrors('the admin key (events belong to merchants)', '/api/events', adminRefused)

function merchantOf (request: FastifyRequest): string {
  const principal = request.principal
  if (principal?.kind !== 'merchant') throw new ForbiddenError('This operation needs a merchant API key.')
  return principal.merchantId
}

/** /api/events: the merchant's events (the outbox's read side). */
const events: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/events', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['events'],
      operationId: 'listEvents',
      summary: 'List events',
      description: 'Your events, newest first, paginated like the payment list (`limit`, `startingAfter`, `endingBefore`); ' +
        `filters: \`type\`, \`createdGte\`, \`createdLt\`, \`paymentId\` (the payment's events and its refunds'). ${eventsDescription}`,
      querystring: EventListQuery,
      security: requiresKey,
      response: {
        200: jsonResponse('A page of events.', Type.Ref(EventList)),
        400: paymentErrors.validation,
        ...authErrors,
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal
      }
    },
    preValidation: integerQuery(['limit'])
  }, async (request) => {
    const query = validPageRequest(request.query)
    const page = await app.events.list({
      ...query,
      ...normalizeRange(query),
      ...(query.paymentId === undefined ? {} : { paymentId: query.paymentId.toLowerCase() }),
      merchantId: merchantOf(request)
    })
    return { data: page.data.map(toEventResource), hasMore: page.hasMore }
  })

  app.get('/events/:id', {
    config: { auth: 'merchant', roles: 'read' },
    schema: {
      tags: ['events'],
      operationId: 'getEvent',
      summary: 'Get an event',
      description: `One of your events; another merchant's event is 404, like an unknown id. ${eventsDescription}`,
      params: EventParams,
      security: requiresKey,
      response: {
        200: jsonResponse('The event.', Type.Ref(Event)),
        ...authErrors,
        404: problemResponse('No such event (or it is another merchant\'s, or past retention).'),
        429: paymentErrors.rateLimited,
        500: paymentErrors.internal
      }
    }
  }, async (request) => toEventResource(await app.events.get(merchantOf(request), request.params.id)))
}

export default events
