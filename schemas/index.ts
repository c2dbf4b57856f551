import { ErrorEnvelope, ProblemDetails } from './common'
import { Product } from './products'
import { Payment } from './payments'
import { Refund } from './refunds'
import { Merchant } from './merchants'
import { ApiKey, CreatedApiKey } from './api-keys'

/** Schemas with an `$id`, registered once at the root so routes and the OpenAPI document share them. */
export const componentSchemas = [ErrorEnvelope, ProblemDetails, Product, Payment, Refund, Merchant, ApiKey, CreatedApiKey]
