package configs

import _ "embed"

// Demo is demo.yaml: the configuration waitroom demo runs, with
// ${WAITROOM_DEMO_*} references the demo command fills in (addresses, a
// data directory, random secrets). Parse it with config.Parse and a lookup
// that supplies them. Read-only: it is shared by the whole program.
//
//go:embed demo.yaml
var Demo []byte
