# scripts/bench/sqlite_floor.sh - sourced by the bench scripts: what SQLite itself costs
# to store the rows an ingest tool wrote, the floor under any writer that goes through
# SQL.  `sqlite_floor_prepare SRC DST SQL` makes DST a fresh database of SRC's own schema
# (tables, constraints, triggers) without the indexes, holding SRC's sources rows, and
# writes to SQL the statements to run in DST: the writer's pragmas (its batches of
# INSERTs run without foreign-key checks, lib/sf_db.c), one transaction that
# copies every other table's rows with INSERT ... SELECT (a WHERE clause keeps SQLite
# from copying records whole, so each row is decoded, checked and encoded as a bound row
# would be), then the indexes built, as sf_db builds the deferred ones.  Measure
# `sqlite3 DST <SQL` with bench_measure; the bind calls and the tool's own code are what
# a real writer adds to that.

sqlite_floor_prepare() {
    local src=$1 dst=$2 sql=$3 t cols
    rm -f "$dst" "$dst"-*
    sqlite3 "$src" "SELECT sql || ';' FROM sqlite_master WHERE type IN ('table', 'view', 'trigger')
                    AND name NOT LIKE 'sqlite_%' AND sql IS NOT NULL ORDER BY rowid" |
        sqlite3 "$dst" || return 1
    sqlite3 "$dst" "PRAGMA journal_mode = WAL; ATTACH '$src' AS o;
                    INSERT INTO main.sources SELECT * FROM o.sources;" >/dev/null || return 1
    {
        echo "PRAGMA foreign_keys = OFF; PRAGMA synchronous = NORMAL; ATTACH '$src' AS o; BEGIN;"
        for t in $(sqlite3 "$src" "SELECT name FROM sqlite_master WHERE type = 'table'
                                   AND name NOT LIKE 'sqlite_%' AND name != 'sources' ORDER BY rowid"); do
            [ "$(sqlite3 "$src" "SELECT count(*) FROM \"$t\"")" = 0 ] && continue
            cols=$(sqlite3 "$src" "SELECT group_concat('\"' || name || '\"', ',')
                                   FROM pragma_table_xinfo('$t') WHERE hidden = 0")
            echo "INSERT INTO main.\"$t\" ($cols) SELECT $cols FROM o.\"$t\" WHERE 1;"
        done
        echo "COMMIT; BEGIN;"
        sqlite3 "$src" "SELECT sql || ';' FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
                        ORDER BY rowid"
        echo "COMMIT;"
    } >"$sql"
}
