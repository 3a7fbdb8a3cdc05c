// The rule that refuses an impossible Date literal, naming its argument (schema/scalars.ts).
import type { Plugin } from 'graphql-yoga';
import { dateLiteralsRule } from '../../schema/scalars.js';

export function useDateLiterals(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(dateLiteralsRule);
    },
  };
}
