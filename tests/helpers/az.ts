// The environment the Azure CLI runs in for the tests: its configuration in a directory of the
// test's own, no telemetry, no colour, errors only.
export function azEnv(configDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AZURE_CONFIG_DIR: configDir,
    AZURE_CORE_COLLECT_TELEMETRY: 'no',
    AZURE_CORE_NO_COLOR: '1',
    AZURE_CORE_ONLY_SHOW_ERRORS: '1',
  };
}
