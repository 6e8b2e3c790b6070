// Package extcompile runs the external compile step of the ExecuTorch
// backends whose payload fxport cannot build itself (CUDA's AOTInductor,
// OpenVINO): Region turns a delegate call's region into a standalone ATen
// program, and Compile writes it as a .pt2 into a temporary directory, runs
// the configured command with the words IN and OUT replaced by the paths
// (nothing is shell-interpreted) and reads back OUT and its side files.
// CompileFiles instead leaves them in the directory, for FileLazy sources
// that stream them into the output file, until Files.Close removes it.
// Every failure is an error that quotes the command's output and says what
// the step needs; nothing is left behind.
package extcompile
