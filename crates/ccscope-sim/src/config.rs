pub fn load_scenario() {} pub struct ConfigError;
