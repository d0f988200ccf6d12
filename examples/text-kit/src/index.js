// text-kit: small text, list and number helpers. Each module is re-exported below.
