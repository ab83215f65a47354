#!/usr/bin/env bash
# House style: dangerous libc calls are not used anywhere in the code.
cd "$(dirname "$0")/../.."
banned='\b(qsort|strcpy|strcat|sprintf|vsprintf|strtok|gets|strncpy|strncat|atoi|atol|atof)[[:space:]]*\('
if grep -nE "$banned" src/*/*.c src/*/*.h cli/*.c cli/*.h include/trainscope/*.h 2>/dev/null | grep -v "^src/core/sort.c:"; then
	echo "banned function used (see docs/ARCHITECTURE.md, Safety)"
	exit 1
fi
exit 0
