-- The stored answer (spec/decisions/0046-stored-answer.md): each resource
-- row keeps the body of its resource answer, store.EncodeResource of the
-- row, written with the row by every INSERT and UPDATE of this binary, so
-- the exact read selects it instead of encoding the columns per request.
-- A row written before this migration has NULL there and is read from its
-- columns. An UPDATE that leaves the answer as it was (a replica of an
-- older binary, which does not know the column, still running while a
-- newer one migrated the database) clears it, so no answer outlives its
-- row's values; this binary's UPDATEs write a new answer whenever the
-- revision moves, and the trigger's WHEN skips them without calling it.

-- +goose Up
ALTER TABLE resources ADD COLUMN answer bytea;

-- +goose StatementBegin
CREATE FUNCTION takoform_resources_answer_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.answer := NULL;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER resources_answer_stale BEFORE UPDATE ON resources FOR EACH ROW
    WHEN (NEW.answer IS NOT NULL AND NEW.answer IS NOT DISTINCT FROM OLD.answer)
    EXECUTE FUNCTION takoform_resources_answer_stale();

-- +goose Down
DROP TRIGGER resources_answer_stale ON resources;
DROP FUNCTION takoform_resources_answer_stale();
ALTER TABLE resources DROP COLUMN answer;
