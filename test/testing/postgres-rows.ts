import pg from 'pg';

/** How many rows of `table` match `where` in the store at `url`; 0 while the table is not made yet. */
export async function countRows(url: string, table: string, where: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ count: string }>(`SELECT COUNT(*) AS count FROM ${table} WHERE ${where}`);
    return Number(result.rows[0]?.count ?? 0);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === '42P01') return 0;
    throw error;
  } finally {
    await client.end();
  }
}
