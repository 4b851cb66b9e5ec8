-- The stored answer (spec/decisions/0046-stored-answer.md): each resource
-- row keeps the body of its resource answer, store.EncodeResource of the
-- row, written with the row by every INSERT and UPDATE of this binary, so
-- the exact read selects it instead of encoding the columns per request.
-- A row written before this migration has NULL there and is read from its
-- columns. An UPDATE that leaves the answer as it was (a writer that does
-- not know the column) clears it, so no answer outlives its row's values;
-- this binary's UPDATEs write a new answer whenever the revision moves.

-- +goose Up
ALTER TABLE resources ADD COLUMN answer BLOB;

-- +goose StatementBegin
CREATE TRIGGER resources_answer_stale AFTER UPDATE ON resources
WHEN NEW.answer IS NOT NULL AND NEW.answer IS OLD.answer BEGIN
    UPDATE resources SET answer = NULL WHERE uid = NEW.uid;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER resources_answer_stale;
ALTER TABLE resources DROP COLUMN answer;
