declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    mode: 'local' | 'distributed';
    /** Where the SMTP peer of `email` nodes writes each message it accepts (JSON files). */
    mailDir: string;
  }
}
export {};
