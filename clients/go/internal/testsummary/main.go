// Command testsummary reads `go test -json` events on stdin and prints what plain `go test`
// would: each package's verdict, and the whole output of every test that failed. It exits
// non-zero when a test or package failed, or when the stream holds no package verdict.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	outputs := map[string][]string{}
	failed, verdicts := false, 0
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	for in.Scan() {
		var ev event
		if json.Unmarshal(in.Bytes(), &ev) != nil {
			fmt.Println(in.Text()) // a build error is plain text
			continue
		}
		key := ev.Package + " " + ev.Test
		switch ev.Action {
		case "output":
			outputs[key] = append(outputs[key], ev.Output)
		case "fail":
			failed = true
			for _, line := range outputs[key] {
				fmt.Print(line)
			}
			if ev.Test == "" {
				verdicts++
			}
		case "pass", "skip":
			if ev.Test == "" {
				verdicts++
				for _, line := range outputs[key] {
					fmt.Print(line)
				}
			}
		}
		if ev.Action == "pass" || ev.Action == "skip" || ev.Action == "fail" {
			delete(outputs, key)
		}
	}
	if failed || verdicts == 0 {
		os.Exit(1)
	}
}
