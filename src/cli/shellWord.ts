/** A path as one word of a POSIX shell command line: as it is where it holds no character the shell reads, else single-quoted. */
export const shellWord = (path: string): string => (/^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`)
