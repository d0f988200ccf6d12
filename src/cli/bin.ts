// The process behind the `colony` command (bin/colony.js starts it).

// React, which draws the terminal UI, runs its production build unless told otherwise: the
// development build keeps a timing entry for every component it renders, so a UI left open
// for days grows without bound, and each frame costs more. Set before anything loads React.
process.env.NODE_ENV ??= 'production';

// A reader that goes away (`colony events | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
});

const { main } = await import('./main.js');
process.exitCode = await main(process.argv.slice(2));
