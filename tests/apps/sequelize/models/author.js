'use strict';

module.exports = (sequelize, DataTypes) => {
  const Author = sequelize.define('Author', {
    name: { type: DataTypes.STRING, allowNull: false },
    email: { type: DataTypes.STRING, allowNull: false, unique: true },
  });
  Author.associate = (models) => {
    Author.hasMany(models.Post, { foreignKey: 'authorId', as: 'posts' });
  };
  return Author;
};
