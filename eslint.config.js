// ESLint (flat config) with typescript-eslint's recommended rules, syntax-only (no type
// information: a type-aware run of the whole tree took too long for npm test on 2 cores).
// Formatting is Prettier's (.prettierrc.json); max-len catches what Prettier cannot break.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "src/generated/**", "web/dist/**", "bench/tmp/**", "data/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "max-len": [
        "error",
        {
          code: 120,
          ignoreUrls: true,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
          ignoreComments: false,
        },
      ],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      // Sanitizers match NUL and other control characters on purpose.
      "no-control-regex": "off",
    },
  },
  {
    // The build scripts that run before TypeScript (emoji tables): plain Node modules.
    files: ["**/*.mjs"],
    languageOptions: { globals: { console: "readonly", process: "readonly", URL: "readonly" } },
    rules: { "no-control-regex": "off" },
  },
);
