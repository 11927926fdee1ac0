/**
 * Random and adversarial values for the fuzz tests.
 *
 * @module
 */

/** Strings that have broken parsers, databases and terminals before. */
export const NASTY_STRINGS = [
  "",
  " ",
  "\u0000\u0001\u0007\n\r\t",
  "\ud800",
  "a\udfffb",
  "🚀👩‍💻🇺🇦",
  '" ( ) NOT NEAR * ^ - : AND OR',
  "'; DROP TABLE messages; --",
  "../../../etc/passwd",
  '[{"content_markdown":"smuggled"}]',
  "null",
  "x".repeat(70_000),
  "é".repeat(5000),
  "\u202e\u200b",
];

/** A picker and a random-value maker driven by `random` (a seeded PRNG). */
export function fuzzer(random: () => number): {
  pick<T>(items: readonly T[]): T;
  value(depth?: number): unknown;
} {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const value = (depth = 0): unknown => {
    const kind = Math.floor(random() * (depth > 3 ? 6 : 9));
    switch (kind) {
      case 0:
        return null;
      case 1:
        return random() < 0.5;
      case 2:
        return pick([0, -1, 1, 2.5, -0, 2 ** 53 + 2, -(2 ** 60), 1e308, 20, 60, 1000]);
      case 3:
      case 4:
        return pick(NASTY_STRINGS);
      case 5:
        return random().toString(36).slice(2);
      case 6:
        return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      case 7:
        return Object.fromEntries(
          Array.from(
            { length: Math.floor(random() * 4) },
            () => [
              pick(["a", "content_markdown", "", "__proto__", "constructor"]),
              value(depth + 1),
            ],
          ),
        );
      default: {
        let deep: unknown = "bottom";
        for (let i = 0; i < 100 + Math.floor(random() * 400); i++) deep = [deep];
        return deep;
      }
    }
  };
  return { pick, value };
}
