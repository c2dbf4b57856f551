import type { SchemaChange } from './ddl'

/*
 * Issue 39: events store a snapshot of the changed resource, rendered as the API shows it when listed or delivered.
 * data_format says which a row holds: 'rendered' (the representation itself, as every row written before this
 * change holds) or 'snapshot'. The default stays 'rendered' so a writer that does not name the column (an instance
 * still running the previous release during a rolling deploy) marks its rows as what they are. Version 150.
 */
export const eventFormatSchema: SchemaChange[] = [
  {
    version: 150,
    name: 'events: data format',
    ddl: () => `
      ALTER TABLE events ADD COLUMN data_format TEXT NOT NULL DEFAULT 'rendered' CHECK (data_format IN ('rendered', 'snapshot'));
    `
  }
]
