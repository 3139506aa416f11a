import { describe, expect, it } from 'vitest';
import { errnoReason, errnoText } from '../../src/native/index.js';

describe('the errno table', () => {
  it("names an errno and gives the C library's words; one not in the table is said as a number", () => {
    expect(errnoText(22)).toBe('errno 22 (EINVAL)');
    expect(errnoText(105)).toBe('errno 105 (ENOBUFS)');
    expect(errnoText(999)).toBe('errno 999');
    expect(errnoReason(101)).toBe('Network is unreachable');
    expect(errnoReason(3)).toBe('No such process');
    expect(errnoReason(999)).toBe('errno 999');
  });
});
