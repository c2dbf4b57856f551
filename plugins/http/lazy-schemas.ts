import ValidatorSelector from '@fastify/ajv-compiler'
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>

type Compile<F> = (route: unknown) => F
type Validate = ((data: unknown) => unknown) & { errors?: unknown }
type Serialize = (data: unknown) => string

/**
 * Fastify's own validator and serializer compilers (Ajv, fast-json-stringify), compiling each
 * route's schema when it is first used instead of at start-up. The service declares a schema for
 * every status of every route (the OpenAPI document), and compiling them all was the largest part
 * of start-up (about 0.3 s of CPU and the garbage it left); a request meets only a few of them.
 * The compiled functions are the same ones Fastify would build, so behaviour is unchanged except
 * that a schema Ajv rejects is reported on its first use (the route tests compile every schema,
 * and `npm run openapi` reads them all).
 */
export function lazySchemaCompilers (): CompilersFactory {
  const validators = ValidatorSelector()
  const serializers = SerializerSelector()
  // The compilers themselves (an Ajv instance per set of shared schemas) are built on first use too.
  function buildValidator (...args: Parameters<typeof validators>): Compile<Validate> {
    let compile: Compile<Validate> | undefined
    return (route) => {
      let compiled: Validate | undefined
      // Ajv reports a failed validation's errors on the function: copied to the one Fastify holds.
      const validate: Validate = (data) => {
        compiled ??= (compile ??= validators(...args) as unknown as Compile<Validate>)(route)
        const valid = compiled(data)
        validate.errors = compiled.errors
        return valid
      }
      return validate
    }
  }
  function buildSerializer (...args: Parameters<typeof serializers>): Compile<Serialize> {
    let compile: Compile<Serialize> | undefined
    return (route) => {
      let compiled: Serialize | undefined
      return (data) => (compiled ??= (compile ??= serializers(...args) as unknown as Compile<Serialize>)(route))(data)
    }
  }
  // The functions returned stand in for the compiled ones (Fastify calls them and reads `errors`).
  return { buildValidator, buildSerializer } as unknown as CompilersFactory
}
