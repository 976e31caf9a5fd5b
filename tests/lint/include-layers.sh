#!/usr/bin/env bash
# One-way layers (issue 10 item 7): a file under lib/ includes nothing from
# outside lib/ (init/, firewall/, execd/, ...), and a file under firewall/
# includes nothing from init/. Each quoted #include is resolved the way the
# compiler does for this tree: first beside the including file, then in the
# directories meson puts on the include path (lib, firewall, init, execd,
# wrappers). One TAP line per checked file.
set -euo pipefail
cd "${1:?usage: include-layers.sh SOURCE_DIR}"
search=(lib firewall init execd wrappers)

resolve() { # resolve FILE INCLUDE: prints the repository-relative path, or nothing
	local dir p
	dir=$(dirname "$1")
	if [ -e "$dir/$2" ]; then
		realpath -m --relative-to=. "$dir/$2"
		return
	fi
	for p in "${search[@]}"; do
		if [ -e "$p/$2" ]; then
			realpath -m --relative-to=. "$p/$2"
			return
		fi
	done
}

mapfile -t files < <(git ls-files -- 'lib/*.[ch]' 'firewall/*.[ch]' 2>/dev/null || find lib firewall -name '*.[ch]')
echo "1..${#files[@]}"
n=0 failed=0
for f in "${files[@]}"; do
	n=$((n + 1))
	bad=()
	while IFS= read -r inc; do
		target=$(resolve "$f" "$inc")
		if [ -z "$target" ]; then
			bad+=("\"$inc\" (not found in the tree)")
			continue
		fi
		case $f in
		lib/*) [[ $target == lib/* ]] || bad+=("\"$inc\" is $target, outside lib/") ;;
		firewall/*) [[ $target != init/* ]] || bad+=("\"$inc\" is $target, in init/") ;;
		*) ;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	if [ "${#bad[@]}" -eq 0 ]; then
		echo "ok $n - $f"
	else
		failed=$((failed + 1))
		echo "not ok $n - $f"
		printf '# %s\n' "${bad[@]}"
	fi
done
[ "$failed" -eq 0 ]
