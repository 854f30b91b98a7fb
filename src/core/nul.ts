import { invalid, type ApiError } from './errors.js';

/**
 * The NUL rule for client text that does not pass the JSON body parser (form fields, file names, headers
 * kept in the store): PostgreSQL cannot store a NUL in text and SQLite can, so Standin refuses it
 * everywhere with the same 400 naming the field, and both stores answer alike.
 */
export function nulRefusal(value: string, param: string): ApiError | undefined {
  return value.includes('\0') ? invalid(`'${param}' must not contain NUL (\\u0000) characters.`, param, 'invalid_value') : undefined;
}
