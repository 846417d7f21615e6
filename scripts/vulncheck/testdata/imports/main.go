// Command imports imports strings but never calls strings.ToUpper.
package main

import (
	"fmt"
	"strings"
)

func main() { fmt.Println(strings.ToLower("TIX")) }
