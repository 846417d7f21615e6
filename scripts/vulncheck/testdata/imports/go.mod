module example.invalid/imports

go 1.26
