// Command keyreg-vet is the keyreg vet analyzer as a go vet tool:
//
//	go build -o keyreg-vet ./cmd/keyreg-vet
//	go vet -vettool=$(pwd)/keyreg-vet -registry=$(pwd)/keys.yaml ./...
//
// Under go vet the analyzer reads only each package's own files, so the
// registry comes as the unprefixed -registry flag (docs/vet.md).
package main

import (
	"os"

	"github.com/keyreg/keyreg/vet"
	"golang.org/x/tools/go/analysis/singlechecker"
)

func main() {
	vet.StartHeap()
	singlechecker.Main(vet.New(&vet.Config{Registry: "keys.yaml", Stats: os.Getenv(vet.ToolEnv) == "1"}))
}
