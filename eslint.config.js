// ESLint flat config: typescript-eslint's type-aware recommended rules over all project code.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "results/**", "coverage/**", ".scratch/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: { allowDefaultProject: ["eslint.config.js"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "no-console": "off",
    },
  },
  {
    // The product's code (not the tests' tables): lines a reader can see whole, functions a reader
    // can hold. Long string and template literals (messages, scripts, CSS) and URLs are exempt.
    files: ["versions.ts", "{vocabulary,config,pod,core,benchmarks,harness,components,stacks,apps}/**/*.ts"],
    rules: {
      "max-len": [
        "error",
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
      "max-lines-per-function": ["error", { max: 80 }],
    },
  },
  { files: ["eslint.config.js"], ...tseslint.configs.disableTypeChecked },
);
