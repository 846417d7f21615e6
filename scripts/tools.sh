# Sourced by the scripts that run pinned Go tools (golint.sh, mutation.sh).
#
# install PKG@VERSION: go install PKG@VERSION into build/tools (git-ignored)
# unless it already holds that version (go version -m reads the module
# version the binary was built from), so a tool is built once per pin.
install() {
	local bin pkg="${1%@*}" version="${1##*@}" name="${1%@*}"
	bin="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/tools"
	name="${name##*/}"
	if [ -x "$bin/$name" ] && go version -m "$bin/$name" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]].*[[:space:]]$version([[:space:]]|$)"; then
		return 0
	fi
	printf '\033[1m==>\033[0m %s\n' "Installing $pkg@$version into build/tools (once per version)"
	GOBIN="$bin" go install "$pkg@$version" || { echo "could not install $pkg@$version" >&2; exit 1; }
}
