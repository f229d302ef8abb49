/**
 * Where a worker thread's code is: the module `name` beside `base` (the caller's
 * `import.meta.url`), as TypeScript run through tsx (tests, `pnpm bench`) or as built JavaScript.
 * The thread inherits the process's Node options (`--conditions=compiled` among them, so that its
 * imports resolve to built code as the service's do); tsx is added where the process lacks it.
 * (Options cannot be passed on instead: a thread refuses V8's, such as the heap sizes.)
 */
export function threadEntry(name: string, base: string): { url: URL; execArgv: string[] | undefined } {
  const typescript = base.endsWith('.ts');
  const needsTsx = typescript && !process.execArgv.some((argument) => /\btsx\b/.test(argument));
  return { url: new URL(`./${name}.${typescript ? 'ts' : 'js'}`, base), execArgv: needsTsx ? ['--import', 'tsx'] : undefined };
}
