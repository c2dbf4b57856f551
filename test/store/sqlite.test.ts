import t from 'tap'
import { createSqliteDatabase } from '../../src/store/sqlite'
import { merchantStoreContract } from './merchants.contract'
import { storeContract } from './contract'

const makeSqlite = async () => createSqliteDatabase('file::memory:', { synchronous: 'FULL' })

t.test('SQLite: merchant store contract', async (t) => {
  merchantStoreContract(t, makeSqlite)
})

t.test('SQLite: store contract', async (t) => {
  storeContract(t, makeSqlite)
})
