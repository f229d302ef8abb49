declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    mode: 'local' | 'distributed';
  }
}
export {};
