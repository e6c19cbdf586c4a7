#include "support/dumps.hpp"

namespace coldgate::testing {

std::string chinook_shaped_dump(const std::string& db, int artists, bool with_variables) {
  std::string out = "DROP DATABASE IF EXISTS " + db + ";\nCREATE DATABASE " + db + ";\n\\c " +
                    db + ";\n\nCREATE TABLE artist (artist_id int PRIMARY KEY, name text NOT NULL);\n"
                    "CREATE TABLE album (album_id int PRIMARY KEY, title text NOT NULL,\n"
                    "                    artist_id int NOT NULL REFERENCES artist);\n";
  for (int i = 1; i <= artists; ++i) {
    out += "INSERT INTO artist (artist_id, name) VALUES (" + std::to_string(i) + ", 'Artist " +
           std::to_string(i) + "');\n";
  }
  out += with_variables ? "INSERT INTO album VALUES (1, :'title', :artist);\n"
                        : "INSERT INTO album VALUES (1, 'For Those About To Rock', 1);\n";
  return out;
}

}  // namespace coldgate::testing
