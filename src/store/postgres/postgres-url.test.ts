import { describe, expect, it } from 'vitest';
import { PostgresConnection } from './postgres-connection.js';
import { isConnectionFailure } from './postgres-failures.js';
import { describeTarget, passwordOf, postgresTarget, redactPostgresText, redactPostgresUrl } from './postgres-url.js';

describe('redactPostgresUrl', () => {
  it.each([
    ['postgres://colony:s3cret@db.example:5432/colony', 'postgres://colony:***@db.example:5432/colony'],
    ['postgresql://colony:s3cret@db.example/colony?sslmode=require', 'postgresql://colony:***@db.example/colony?sslmode=require'],
    ['postgres://colony:p%40ss%2Fword@db.example/colony', 'postgres://colony:***@db.example/colony'],
    ['postgres://colony:pa@ss/wo:rd@db.example/colony', 'postgres://colony:***@db.example/colony'],
    ['postgres://colony:@db.example/colony', 'postgres://colony:***@db.example/colony'],
    ['postgres://colony@db.example:5432/colony', 'postgres://colony@db.example:5432/colony'],
    ['postgres://db.example:5432/colony', 'postgres://db.example:5432/colony'],
    ['postgres://db.example/colony?application_name=a@b', 'postgres://db.example/colony?application_name=a@b'],
    ['not a url at all', 'not a url at all'],
  ])('redacts %s', (url, redacted) => {
    expect(redactPostgresUrl(url)).toBe(redacted);
  });
});

describe('redactPostgresText', () => {
  it('hides every URL password and the password itself, also percent-encoded, wherever a message quotes it', () => {
    const text = 'connect postgres://a:one@h1/d failed; retried "postgresql://b:two@h2:6543/e"; the server said: bad p@ss/1 and p%40ss%2F1';
    expect(redactPostgresText(text, 'p@ss/1')).toBe(
      'connect postgres://a:***@h1/d failed; retried "postgresql://b:***@h2:6543/e"; the server said: bad *** and ***',
    );
    expect(redactPostgresText('nothing to hide')).toBe('nothing to hide');
  });
});

describe('postgresTarget', () => {
  it('names the host, port, database and user, and the URL without its password', () => {
    const target = postgresTarget('postgres://colony:s3cret@db.example:6543/runs');
    expect(target).toEqual({ url: 'postgres://colony:***@db.example:6543/runs', host: 'db.example', port: '6543', database: 'runs', user: 'colony' });
    expect(describeTarget(target)).toBe('database "runs" on db.example:6543 (postgres://colony:***@db.example:6543/runs)');
    expect(postgresTarget('postgres://colony@/colony?host=/run/postgresql')).toMatchObject({ host: '/run/postgresql', port: '5432', database: 'colony' });
    expect(passwordOf('postgres://colony:p%40ss@db/colony')).toBe('p@ss');
  });

  it('refuses what is not a postgres URL without quoting its password', () => {
    expect(() => postgresTarget('mysql://root:hunter2@db/app')).toThrow(/takes a URL such as postgres:\/\/user:password@host:5432\/database, got mysql:\/\/root:\*\*\*@db\/app/);
    expect(() => postgresTarget('mysql://root:hunter2@db/app')).not.toThrow(/hunter2/);
  });
});

describe('a PostgreSQL connection, before it connects', () => {
  it('refuses a schema, a pool size or a retry time it cannot use, and a URL that sets options', () => {
    const url = 'postgres://colony:s3cret@db.example/colony';
    expect(() => new PostgresConnection({ url, schema: 'Runs; DROP TABLE tasks' })).toThrow(/lower-case name of letters, digits and underscores/);
    expect(() => new PostgresConnection({ url, poolSize: 0 })).toThrow(/pool size must be a whole number of at least 1/);
    expect(() => new PostgresConnection({ url, retryMs: -1 })).toThrow(/retry time must be whole milliseconds/);
    expect(() => new PostgresConnection({ url: `${url}?options=-c%20search_path%3Dx` })).toThrow(/sets options; colony sets them itself/);
  });

  it('tells a connection that failed from a statement that was refused', () => {
    expect(isConnectionFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isConnectionFailure(new AggregateError([Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })]))).toBe(true);
    expect(isConnectionFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionFailure(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isConnectionFailure(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe(true);
    expect(isConnectionFailure(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBe(false);
    expect(isConnectionFailure(Object.assign(new Error('password authentication failed'), { code: '28P01' }))).toBe(false);
    expect(isConnectionFailure(new Error('Connection terminated'), 0)).toBe(true);
    expect(isConnectionFailure('ECONNREFUSED')).toBe(false);
  });
});
