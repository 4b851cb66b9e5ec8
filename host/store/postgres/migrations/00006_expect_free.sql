-- A create's one round trip (spec/decisions/0048-postgres-create-one-round-trip.md):
-- a transaction that took the empty state of a key for granted
-- (Tx.KeyStateExpectFree) verifies it, after the key's locks, with one
-- statement that calls this function: it raises SQLSTATE TK001 when ok
-- is not true, which aborts the transaction before any of its writes
-- can commit, and the store runs the transaction's function again on
-- the state as read.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION takoform_expect(ok boolean, what text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF ok IS NOT TRUE THEN
        RAISE EXCEPTION USING ERRCODE = 'TK001', MESSAGE = 'expected ' || what;
    END IF;
    RETURN true;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION takoform_expect(boolean, text);
