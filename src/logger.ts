/** The logger the core writes to (pino's shape; Fastify's logger is one). */
export interface Logger {
  debug?: (details: object, message: string) => void
  info: (details: object, message: string) => void
  warn: (details: object, message: string) => void
  error: (details: object, message: string) => void
}
