-- dynindex 0.2 -> 0.3: every schema change of release 0.3.
-- CREATE EXTENSION dynindex runs dynindex--0.1.sql and dynindex--0.1--0.2.sql (both frozen:
-- 0.1 and 0.2 are released) and then this script; ALTER EXTENSION dynindex UPDATE runs it
-- on a 0.2 database (after dynindex--0.1--0.2.sql on a 0.1 one).
-- Each feature keeps its own section below (parallel work edits only its own), and the
-- library serves a database still at 0.2 until the update (docs/versions.md).
\echo Use "ALTER EXTENSION dynindex UPDATE TO '0.3'" to load this file. \quit
