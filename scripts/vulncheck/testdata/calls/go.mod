module example.invalid/calls

go 1.26
