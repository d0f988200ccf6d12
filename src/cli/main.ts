/** Entry point of the `colony` command. Returns the process exit code. */
export async function main(_argv: readonly string[]): Promise<number> {
  return 0;
}
