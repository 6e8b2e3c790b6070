package tests

func isFXText(string) bool { return false }
