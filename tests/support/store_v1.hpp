#pragma once
// The store's layout at schema version 1, as the builds before version 2 created it (WITHOUT
// ROWID, keyed by kind and key), for tests of what a newer build does with such a store. A fixed
// historical fact: never change it.

namespace firstwork::testing {

inline constexpr const char* kStoreSchemaV1 =
    "CREATE TABLE records ("
    "  kind TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  cluster TEXT NOT NULL,"
    "  cluster_queue TEXT NOT NULL,"
    "  time_ms INTEGER NOT NULL,"
    "  body TEXT NOT NULL,"
    "  PRIMARY KEY (kind, key)) WITHOUT ROWID;"
    "CREATE INDEX records_by_time ON records(kind, time_ms);"
    "CREATE INDEX records_by_cluster ON records(kind, cluster, time_ms);"
    "PRAGMA user_version=1;";

}  // namespace firstwork::testing
