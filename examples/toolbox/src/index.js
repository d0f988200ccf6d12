// The package's public API: every module is re-exported here.
