// Command calls calls strings.ToUpper, which the test database says is vulnerable.
package main

import (
	"fmt"
	"strings"
)

func main() { fmt.Println(strings.ToUpper("tix")) }
